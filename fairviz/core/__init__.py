"""The shared core every concept builds on: the data model, confusion counts, statistics, wording, JSON cleaning.

Nothing here imports a concept, the report layer or the CLI (an import-linter contract in the tests holds it)."""
