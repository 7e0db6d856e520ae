# frozen_string_literal: true

# Floors from "may use" declarations, shared by the layer tests of both
# halves (test/unit/test_layers.rb, test/unit/test_ruby_layers.rb). The
# including test defines shown(name), how a unit is named in the picture.
module Floors
  # {"error" => 1, ...}: 1 for a unit that may use nothing, else one above
  # the highest unit it may use (+declared+: name => list, anything but a
  # list counting as nothing). Fails on a circle.
  def floors(declared)
    floors = {}
    visit = lambda do |name, path|
      flunk "the May use lines make a circle: #{(path + [name]).join(" -> ")}" if path.include?(name)
      list = declared.fetch(name, nil)
      floors[name] ||= 1 + (list.is_a?(Array) ? list : []).map { |used| visit.call(used, path + [name]) }.max.to_i
    end
    declared.each_key { |name| visit.call(name, []) }
    floors
  end

  # The text picture of the floors, the top floor first.
  def picture(floors)
    floors.group_by { |_, floor| floor }.sort.reverse.map do |floor, names|
      "#{floor.to_s.ljust(2)} #{names.map { |name, _| shown(name) }.sort.join("  ")}".rstrip
    end.join("\n")
  end
end
