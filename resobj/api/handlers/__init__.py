"""Thin handlers: parse, authorise, one object call, format."""
