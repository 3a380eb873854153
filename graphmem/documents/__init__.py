"""Documents: parsing, chunking, versions and chunk search (see docs/documents.md)."""
