"""HTTP concerns: negotiation, encoding, tables."""
