from dynamic_tools.selection.ranker import ToolRanker
from dynamic_tools.tools.models import ToolConfig


def make(name: str, description: str) -> ToolConfig:
    return ToolConfig.model_validate(
        {
            "name": name,
            "description": description,
            "api": {"method": "GET", "base_url": "https://x.example", "path": "/" + name},
        }
    )


TOOLS = [
    make("search_flights", "Search flights between airports"),
    make("book_hotel", "Reserve a hotel room in a city"),
    make("cancel_booking", "Cancel a flight booking"),
    make("get_weather", "Current weather for a city"),
]


def test_top_k_keeps_the_best_matches_first() -> None:
    ranker = ToolRanker()
    top = ranker.top_k("I need a hotel room in Paris", TOOLS, 2)
    assert top[0].name == "book_hotel" and len(top) == 2
    assert ranker.top_k("weather in Oslo", TOOLS, 1)[0].name == "get_weather"


def test_no_known_word_keeps_the_input_order_and_small_sets_pass_through() -> None:
    ranker = ToolRanker()
    assert [t.name for t in ranker.top_k("zzz qqq", TOOLS, 2)] == ["search_flights", "book_hotel"]
    assert ranker.top_k("anything", TOOLS[:2], 5) == TOOLS[:2]
