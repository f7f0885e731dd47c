# tests/backends: files are listed here as they are added.
