"""The travel demo: a deterministic, in-memory travel API to exercise tools and workflows.

``travel_data`` holds the offers, records and seat counts (no HTTP); ``travel_api`` serves them
with idempotency keys, call counters and fault injection. Mount it with
``app.include_router(create_travel_router(), prefix="/demo/travel")``.
"""

from dynamic_tools.demo.travel_api import (
    IDEMPOTENCY_HEADER,
    REPLAYED_HEADER,
    OperationControls,
    create_travel_router,
)
from dynamic_tools.demo.travel_data import (
    OPERATIONS,
    SOLD_OUT_DAY_OF_MONTH,
    SOLD_OUT_FLIGHT_NUMBER,
    STATE_CHANGING_OPERATIONS,
    TravelConflictError,
    TravelError,
    TravelInputError,
    TravelNotFoundError,
    TravelState,
)

__all__ = [
    "IDEMPOTENCY_HEADER",
    "OPERATIONS",
    "REPLAYED_HEADER",
    "SOLD_OUT_DAY_OF_MONTH",
    "SOLD_OUT_FLIGHT_NUMBER",
    "STATE_CHANGING_OPERATIONS",
    "OperationControls",
    "TravelConflictError",
    "TravelError",
    "TravelInputError",
    "TravelNotFoundError",
    "TravelState",
    "create_travel_router",
]
