# tests/metatemplates: files are listed here as they are added.
