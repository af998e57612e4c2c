"""Contract rules, one module per dialect, plus the helpers they share (schemas, argument encoding)."""
