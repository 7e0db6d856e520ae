# frozen_string_literal: true

# The rows every process starts with: two projects, their members and tasks.
website = Project.create!(id: 1, name: "Website")
alice = website.members.create!(name: "alice", email: "alice@example.org")
website.members.create!(name: "bob", email: "bob@example.org")
website.tasks.create!(title: "Write the landing page", assignee: alice)
website.tasks.create!(title: "Pick a font", done: true)

billing = Project.create!(id: 2, name: "Billing")
carol = billing.members.create!(name: "carol", email: "carol@example.org")
billing.tasks.create!(title: "Send the invoices", assignee: carol)
