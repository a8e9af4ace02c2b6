"""The usage history: a Parquet dataset collected from the service."""
