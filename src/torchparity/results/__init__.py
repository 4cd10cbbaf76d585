"""Result models (pydantic) and stores (JSON bundle, SQLite)."""
