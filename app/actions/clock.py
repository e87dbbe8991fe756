"""The time and date here, and in a named place: IANA time zones (`zoneinfo`, with `tzdata`
where the system has none) looked up by their city ("Tokyo" → Asia/Tokyo, "New York" →
America/New_York), plus the zones' own names ("UTC").

Pure functions; the city table is built once (~10 ms, cached, any thread).
"""

from __future__ import annotations

import functools
import zoneinfo
from datetime import datetime

ALIASES = {
    "utc": "UTC",
    "gmt": "UTC",
    "san francisco": "America/Los_Angeles",
    "washington": "America/New_York",
    "beijing": "Asia/Shanghai",
    "delhi": "Asia/Kolkata",
    "mumbai": "Asia/Kolkata",
    "munich": "Europe/Berlin",
    "frankfurt": "Europe/Berlin",
    "hamburg": "Europe/Berlin",
    "milan": "Europe/Rome",
    "barcelona": "Europe/Madrid",
    "geneva": "Europe/Zurich",
    "seattle": "America/Los_Angeles",
    "boston": "America/New_York",
    "miami": "America/New_York",
    "montreal": "America/Toronto",
    "rio de janeiro": "America/Sao_Paulo",
    "osaka": "Asia/Tokyo",
    "kyoto": "Asia/Tokyo",
    "beirut": "Asia/Beirut",
    "hawaii": "Pacific/Honolulu",
}


@functools.cache
def _cities() -> dict[str, str]:
    table: dict[str, str] = {}
    for zone in zoneinfo.available_timezones():
        if "/" in zone and not zone.startswith(("Etc/", "SystemV/", "US/")):
            table.setdefault(zone.rsplit("/", 1)[1].replace("_", " ").lower(), zone)
    table.update(ALIASES)
    return table


def zone_of(place: str) -> str | None:
    """The IANA zone of a city said by name, or None when it is not one the table knows."""
    key = " ".join(place.lower().strip(" ?.!").removeprefix("the ").split())
    return _cities().get(key)


def now(zone: str | None = None) -> datetime:
    """The time now, here (the system's zone) or in `zone`."""
    return datetime.now(zoneinfo.ZoneInfo(zone)) if zone else datetime.now().astimezone()
