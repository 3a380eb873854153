"""Loaders that turn public benchmark files and JSON lines into `MessageIn` batches."""
