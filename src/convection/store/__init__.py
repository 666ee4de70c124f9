"""Durable state. Only code in this package touches SQL."""
