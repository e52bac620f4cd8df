"""The store edge: the only code that imports psycopg and pgvector."""
