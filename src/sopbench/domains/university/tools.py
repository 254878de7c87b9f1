"""University tools: what the lenient system does on the database for each call.

Each body runs after the tool's innate check (catalogue ``innate_dependencies``) has passed, and
reads and writes the database in the same order as the published system, so that a call which
fails half-way raises the same exception at the same point and leaves the same partial write.

Published behaviours kept (recorded trajectories were produced by them; replay must reproduce them):

- ``enroll_course`` checks only that the course exists: an unknown student raises ``KeyError: '<username>'``,
  and enrolling twice in the same course appends it twice and counts its credits and seat twice.
- ``drop_course`` has no innate check: an unknown course raises ``KeyError: '<code>'``, an unknown student
  ``KeyError: '<username>'``, a course the student is not enrolled in ``ValueError: list.remove(x): x not in list``.
- ``request_graduation`` changes nothing and returns ``True`` for any username, even an unknown one.
- ``logout_user`` returns ``True`` for any username.
- ``apply_financial_aid``, ``change_major`` and ``declare_minor`` raise ``KeyError: '<username>'`` for an
  unknown student; ``declare_minor`` may declare the same minor twice; ``change_major`` to the current
  major still counts as a change.
- ``internal_get_number_of_students_for_major`` fails with a bare ``False`` (not a pair), so a check that
  unpacks it raises ``TypeError: cannot unpack non-iterable bool object``.
- Reader failure values differ: ``(False, {})`` for student, course and major info, ``(False, None)`` for
  minor info, ``(False, False)`` for the major and minor existence checks, ``False`` for the others.
- ``internal_get_major_info`` falls back to ``{}`` when the database has no ``majors`` table, but its
  innate check (``internal_check_major_exists``) reads ``majors`` directly and raises ``KeyError: 'majors'``.
- The published strict class has no ``internal_*`` tools (its evaluator reports calls to them with
  status 1); that is the evaluator's concern, the oracle here has them all.
- The published default parameters list ``max_minors`` twice (3, then 2); the effective value is 2,
  which is what ``sop.json`` holds.
- Fixed thresholds in checks (see constraints.py): upper-division courses need 90 completed credits and
  half-time enrolment is 6 current credits whatever the parameters say; ``min_credits_minor`` and
  ``min_credits_financial_aid`` are never read.
- A course with an empty ``restricted_to_majors`` list fails ``meets_major_restriction`` for every
  student (the published field description says it means "open to all": domain option
  ``empty_major_restriction_is_open``, off by default).
- ``minor_course_overlap_check`` compares with the parameter ``max_overlap_minor_major``; a minor's own
  ``max_overlap`` and ``min_credits`` fields are never read.
- Registration, graduation, withdrawal and minor deadlines compare date-times (a bare end date means its
  midnight), the major change deadline compares dates only.
"""

from __future__ import annotations

from typing import Any, cast

from sopbench.domains import READ, WRITE, Context

from . import DOMAIN


# ---- session -------------------------------------------------------------------------------------
@DOMAIN.tool(
    WRITE,
    "Sign a student in with their username and password.",
    returns="Returns True when the password is correct.",
)
def login_user(ctx: Context, username: str, password: str) -> bool:
    return cast(bool, ctx.db["students"][username]["password"] == password)


@DOMAIN.tool(WRITE, "Sign a student out of the current session.", returns="Returns True.")
def logout_user(ctx: Context, username: str) -> bool:
    return True


# ---- services ------------------------------------------------------------------------------------
@DOMAIN.tool(
    WRITE,
    "Register a student in a course, adding its credits to the student's current load and taking one seat.",
    returns="Returns True once the student is enrolled, False if the course is unknown.",
)
def enroll_course(ctx: Context, username: str, course_code: str) -> bool:
    course = ctx.db["courses"][course_code]
    student = ctx.db["students"][username]
    student["enrolled_courses"].append(course_code)
    student["current_credits"] += course["credits"]
    course["enrolled"] += 1
    return True


@DOMAIN.tool(
    WRITE,
    "Withdraw a student from a course they are enrolled in, releasing its credits and its seat.",
    returns="Returns True once the course is dropped.",
)
def drop_course(ctx: Context, username: str, course_code: str) -> bool:
    course = ctx.db["courses"][course_code]
    student = ctx.db["students"][username]
    student["enrolled_courses"].remove(course_code)
    student["current_credits"] -= course["credits"]
    course["enrolled"] -= 1
    return True


@DOMAIN.tool(
    WRITE, "File a student's application to graduate.", returns="Returns True once the application is filed."
)
def request_graduation(ctx: Context, username: str) -> bool:
    return True  # the application is not recorded anywhere in the database


@DOMAIN.tool(
    WRITE,
    "Submit a student's financial aid application for this quarter, counting one more aid quarter.",
    returns="Returns True once the application is submitted.",
)
def apply_financial_aid(ctx: Context, username: str) -> bool:
    ctx.db["students"][username]["financial_aid_quarters"] += 1
    return True


@DOMAIN.tool(
    WRITE,
    "Switch a student's declared major to another programme, counting one more major change.",
    returns="Returns True once the major is changed, False if the new major is not offered.",
)
def change_major(ctx: Context, username: str, new_major: str) -> bool:
    student = ctx.db["students"][username]
    student["major"] = new_major
    student["major_changes"] += 1
    return True


@DOMAIN.tool(
    WRITE,
    "Add a minor to a student's declared minors.",
    returns="Returns True once the minor is added, False if it is not offered.",
)
def declare_minor(ctx: Context, username: str, minor: str) -> bool:
    ctx.db["students"][username]["minors"].append(minor)
    return True


# ---- internal look-ups -----------------------------------------------------------------------------
@DOMAIN.tool(
    READ, "Tell whether a student with this username is on record.", returns="Returns True or False."
)
def internal_check_username_exists(ctx: Context, username: str) -> tuple[bool, bool]:
    return True, username in ctx.db["students"]


@DOMAIN.tool(
    READ, "Tell whether a course with this code is in the catalogue.", returns="Returns True or False."
)
def internal_check_course_exists(ctx: Context, course_code: str) -> tuple[bool, bool]:
    return True, course_code in ctx.db["courses"]


@DOMAIN.tool(
    READ,
    "Read a student's record.",
    returns="Returns the record: major, GPA, completed and current credits, enrolled and completed courses, "
    "tuition balance, academic status, financial aid quarters, residency, income, minors and major changes.",
    failure=(False, {}),
)
def internal_get_student_info(ctx: Context, username: str) -> tuple[bool, dict[str, Any]]:
    return True, ctx.db["students"][username]


@DOMAIN.tool(
    READ,
    "Read a course's catalogue entry.",
    returns="Returns prerequisites, capacity, seats taken, weekly schedule, credits, division, exam time and the "
    "majors it is restricted to.",
    failure=(False, {}),
)
def internal_get_course_info(ctx: Context, course_code: str) -> tuple[bool, dict[str, Any]]:
    return True, ctx.db["courses"][course_code]


@DOMAIN.tool(
    READ,
    "Read the academic calendar.",
    returns="Returns the registration period and the graduation, withdrawal, major change and minor declaration "
    "deadlines.",
)
def internal_get_academic_calendar(ctx: Context) -> tuple[bool, dict[str, Any]]:
    return True, ctx.db["academic_calendar"]


@DOMAIN.tool(
    READ,
    "Read a major's requirements.",
    returns="Returns its required courses, minimum GPA and capacity.",
    failure=(False, {}),
)
def internal_get_major_info(ctx: Context, major: str) -> tuple[bool, dict[str, Any]]:
    return True, ctx.db.get("majors", {}).get(major, {})


@DOMAIN.tool(
    READ,
    "Read a minor's requirements.",
    returns="Returns its required courses, minimum credits and GPA, prerequisites, allowed overlap with the major "
    "and the majors it cannot be combined with.",
    failure=(False, None),
)
def internal_get_minor_info(ctx: Context, minor: str) -> tuple[bool, dict[str, Any] | None]:
    return True, ctx.db["minors"].get(minor, {})


@DOMAIN.tool(
    READ,
    "Tell whether the university offers a minor of this name.",
    returns="Returns True or False.",
    failure=(False, False),
)
def internal_check_minor_exists(ctx: Context, minor: str) -> tuple[bool, bool]:
    return True, minor in ctx.db["minors"]


@DOMAIN.tool(
    READ,
    "Tell whether the university offers a major of this name.",
    returns="Returns True or False.",
    failure=(False, False),
)
def internal_check_major_exists(ctx: Context, major: str) -> tuple[bool, bool]:
    return True, major in ctx.db["majors"]


@DOMAIN.tool(
    READ, "Read the current date and time of this interaction.", returns="Returns an ISO date-time string."
)
def internal_get_interaction_time(ctx: Context) -> tuple[bool, str]:
    return True, ctx.db["interaction_time"]


@DOMAIN.tool(READ, "Read the whole university database.", returns="Returns every table of the database.")
def internal_get_database(ctx: Context) -> tuple[bool, dict[str, Any]]:
    return True, ctx.db


@DOMAIN.tool(
    READ, "Count the students currently declared in a major.", returns="Returns the number of students."
)
def internal_get_number_of_students_for_major(ctx: Context, major: str) -> tuple[bool, int]:
    return True, sum(1 for student in ctx.db["students"].values() if student["major"] == major)
