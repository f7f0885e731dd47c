# tests/search: files are listed here as they are added.
