"""resobj: versioned domain objects for tracking cloud compute resources."""
