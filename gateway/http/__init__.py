"""The HTTP edge: the only code that imports Litestar."""
