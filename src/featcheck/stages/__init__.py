"""The audit's stages after cargo answered, each a function from what the one before made to
what the next needs: members -> configurations -> resolve -> detect -> place -> finish
(suppressions and the report). `featcheck.pipeline` runs them in that order, and holds the
detect stage itself."""
