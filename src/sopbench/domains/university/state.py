"""The university database layout and the session the strict oracle keeps for it.

The model validates a task's ``initial_database`` once, before an episode starts. It is strict about
the shape the tools and checks rely on (a record where a record is expected, numbers that are
numbers, lists that are lists) and lets records carry extra fields, since generated tasks may add
some; the database itself stays plain JSON data, the model is only a gate.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, StrictStr

# Every number field of the published tasks is an int except GPAs; a float field accepts both.
Number = StrictInt | StrictFloat


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class Student(_Record):
    password: StrictStr
    major: StrictStr
    completed_credits: Number
    gpa: Number
    enrolled_courses: list[StrictStr]
    completed_courses: list[StrictStr]
    current_credits: Number
    tuition_balance: Number
    academic_status: StrictStr
    financial_aid_quarters: StrictInt
    residency: StrictStr
    income: Number
    minors: list[StrictStr]
    major_changes: StrictInt


class Schedule(_Record):
    days: list[StrictStr]
    time: StrictStr  # "HH:MM-HH:MM"


class Course(_Record):
    prerequisites: list[StrictStr]
    capacity: StrictInt
    enrolled: StrictInt
    schedule: Schedule
    credits: Number
    division: StrictStr  # "lower" or "upper"; only "upper" is checked
    exam_schedule: StrictStr  # ISO date-time
    restricted_to_majors: list[StrictStr]


class AcademicCalendar(_Record):
    registration_period: list[StrictStr]  # [start, end], ISO dates
    graduation_deadline: StrictStr
    withdrawal_deadline: StrictStr
    major_change_deadline: StrictStr
    minor_declaration_deadline: StrictStr


class Major(_Record):
    required_courses: list[StrictStr]
    min_gpa: Number
    capacity: StrictInt


class Minor(_Record):
    required_courses: list[StrictStr]
    min_credits: Number
    min_gpa: Number
    prerequisites: list[StrictStr]
    max_overlap: StrictInt
    incompatible_majors: list[StrictStr]


class UniversityDatabase(_Record):
    """Students keyed by username, courses by code, majors and minors by name."""

    students: dict[str, Student]
    courses: dict[str, Course]
    academic_calendar: AcademicCalendar
    majors: dict[str, Major]
    minors: dict[str, Minor]
    interaction_time: StrictStr  # ISO date-time: "now" for every date check


def new_session() -> dict[str, Any]:
    """The oracle's session: at most one logged-in student (None: nobody)."""
    return {"user": None}
