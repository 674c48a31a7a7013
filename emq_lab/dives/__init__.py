"""The dives' logic, one module each (upsert, cadence, race, crash), driving the core's real
phases; ``common`` holds what they share. Widgets and notebooks call these."""
