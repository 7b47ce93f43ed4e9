"""Executing runs: launchers (durable on DBOS, or local), the run service, the HTTP tool runner.

Durable execution is split by job: DBOS configuration (``durable_config``), replica presence
(``presence``), the DBOS workflow functions (``durable_workflows``), the launcher
(``durable_launcher``) and a client for other processes (``durable_client``); the durable
step runner is ``durable_steps`` and the journal's file lock ``journal_lock``.
"""
