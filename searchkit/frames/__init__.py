"""DataFrames made from the model: limits and throughput."""
