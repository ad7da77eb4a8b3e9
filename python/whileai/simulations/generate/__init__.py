"""Situation grid, writers, diversity selection, agents and the seeded agent."""
