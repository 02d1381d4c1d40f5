"""JSON Schemas for request bodies and query strings, per noun."""
