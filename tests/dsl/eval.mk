# tests/dsl: files are listed here as they are added.
