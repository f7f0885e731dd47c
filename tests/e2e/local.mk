# tests/e2e: files are listed here as they are added.
