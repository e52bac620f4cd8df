"""Operations: readiness and the gauges read at scrape time."""
