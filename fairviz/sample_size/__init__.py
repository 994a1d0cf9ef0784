"""Sample-size-aware significance: MATCH (metric distributions under a binomial null) and CPS smoothing."""
