"""Running workflows: launchers (durable on DBOS, or local), the HTTP tool runner, run events."""
