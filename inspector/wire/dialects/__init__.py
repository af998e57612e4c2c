"""One package per wire dialect: what that dialect's JSON means (field spellings, schema dialect),
shared by the rules, the fixers, the bridges and the summaries."""
