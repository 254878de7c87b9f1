"""University constraints: how the oracle decides each one, and how each one is worded.

Checks read the database through the lenient tools (``ctx.call``), as the published state tracker
did, so a look-up whose innate check fails hands back that tool's failure value and the check then
fails on it the same way (e.g. ``KeyError: 'gpa'`` on the empty record of an unknown student). The
order of look-ups and of field reads inside each check is the published one, which decides which
exception a broken database raises. The ``constraint_dependencies`` chains of the catalogue run the
existence checks first, so in the published tasks these paths are not reached.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

from sopbench.domains import Context, parse_time

from . import DOMAIN, EMPTY_MAJOR_RESTRICTION_IS_OPEN

# Fixed in the published checks rather than taken from the constraint parameters.
UPPER_DIVISION_MIN_CREDITS = 90
HALF_TIME_MIN_CREDITS = 6
GEN_ED_PREFIX = "GEN"
GEN_ED_MIN_COURSES = 10
ELIGIBLE_RESIDENCIES = ("in-state", "public")


def _read(ctx: Context, tool: str, **arguments: Any) -> Any:
    """The value of a look-up, unpacked like the published ``_, value = tool(...)``.

    Unpacking (rather than indexing) matters: a bare ``False`` failure raises
    ``TypeError: cannot unpack non-iterable bool object``.
    """
    _, value = ctx.call(tool, **arguments)
    return value


def _student(ctx: Context, username: str) -> Any:
    return _read(ctx, "internal_get_student_info", username=username)


def _course(ctx: Context, course_code: str) -> Any:
    return _read(ctx, "internal_get_course_info", course_code=course_code)


def _calendar(ctx: Context) -> Any:
    return _read(ctx, "internal_get_academic_calendar")


def _now(ctx: Context) -> datetime:
    return datetime.fromisoformat(_read(ctx, "internal_get_interaction_time"))


# ---- session -------------------------------------------------------------------------------------
@DOMAIN.check(
    "The student {username} is signed in.",
    "The student {username} is not signed in.",
)
def logged_in_user(ctx: Context, username: str) -> bool:
    return cast(bool, ctx.session["user"] == username)


@DOMAIN.session_effect("login_user")
def _sign_in(session: dict[str, Any], username: str, **_: Any) -> None:
    session["user"] = username


@DOMAIN.session_effect("logout_user")
def _sign_out(session: dict[str, Any], **_: Any) -> None:
    session["user"] = None  # whoever is named: the published tracker cleared the session outright


# ---- enrolment -----------------------------------------------------------------------------------
@DOMAIN.check(
    "The student {username} has completed every prerequisite of course {course_code}.",
    "The student {username} is missing at least one prerequisite of course {course_code}.",
)
def has_completed_prerequisites(ctx: Context, username: str, course_code: str) -> bool:
    student = _student(ctx, username)
    course = _course(ctx, course_code)
    # The student's record is only read if the course has a prerequisite (lazy, as published).
    return all(code in student["completed_courses"] for code in course["prerequisites"])


@DOMAIN.check(
    "The current time lies within the registration period (from its start date to its end date, both at 00:00).",
    "The current time lies outside the registration period (from its start date to its end date, both at 00:00).",
)
def within_registration_period(ctx: Context) -> bool:
    calendar = _calendar(ctx)
    now_text = _read(ctx, "internal_get_interaction_time")
    # Parsed start, now, end: the order decides which malformed date is reported.
    start = datetime.fromisoformat(calendar["registration_period"][0])
    now = datetime.fromisoformat(now_text)
    end = datetime.fromisoformat(calendar["registration_period"][1])
    return start <= now <= end


@DOMAIN.check(
    "Course {course_code} still has a free seat.",
    "Course {course_code} has no free seat left.",
)
def course_has_capacity(ctx: Context, course_code: str) -> bool:
    course = _course(ctx, course_code)
    return cast(bool, course["enrolled"] < course["capacity"])


@DOMAIN.check(
    "Adding course {course_code} keeps the current credits of student {username} at or below "
    "{max_credits_per_quarter} for the quarter.",
    "Adding course {course_code} would take the current credits of student {username} above "
    "{max_credits_per_quarter} for the quarter.",
)
def credits_within_limit(ctx: Context, username: str, course_code: str) -> bool:
    student = _student(ctx, username)
    course = _course(ctx, course_code)
    return cast(bool, student["current_credits"] + course["credits"] <= ctx.params["max_credits_per_quarter"])


def _schedules_overlap(first: Mapping[str, Any], second: Mapping[str, Any]) -> bool:
    """Two weekly slots clash when they share a day and their time ranges overlap (ends exclusive)."""
    # ``first["days"]`` is read up front, ``second["days"]`` only if ``first`` has a day (as published).
    if not any(day in second["days"] for day in first["days"]):
        return False
    first_start, first_end = [parse_time(t, "%H:%M") for t in first["time"].split("-")]
    second_start, second_end = [parse_time(t, "%H:%M") for t in second["time"].split("-")]
    return first_start < second_end and second_start < first_end


@DOMAIN.check(
    "Course {course_code} does not clash with the weekly schedule of any course student {username} is enrolled in.",
    "Course {course_code} clashes with the weekly schedule of a course student {username} is enrolled in.",
)
def no_schedule_conflict(ctx: Context, username: str, course_code: str) -> bool:
    new_course = _course(ctx, course_code)
    student = _student(ctx, username)
    for enrolled_code in student["enrolled_courses"]:
        enrolled = _course(ctx, enrolled_code)
        if _schedules_overlap(enrolled["schedule"], new_course["schedule"]):
            return False
    return True


@DOMAIN.check(
    "Course {course_code} is not upper-division, or student {username} has completed at least "
    f"{UPPER_DIVISION_MIN_CREDITS} credits.",
    "Course {course_code} is upper-division and student {username} has completed fewer than "
    f"{UPPER_DIVISION_MIN_CREDITS} credits.",
)
def meets_division_requirements(ctx: Context, username: str, course_code: str) -> bool:
    course = _course(ctx, course_code)
    student = _student(ctx, username)
    return cast(
        bool, course["division"] != "upper" or student["completed_credits"] >= UPPER_DIVISION_MIN_CREDITS
    )


@DOMAIN.check(
    "The student {username} has not already completed course {course_code}.",
    "The student {username} has already completed course {course_code}.",
)
def course_not_completed(ctx: Context, username: str, course_code: str) -> bool:
    return course_code not in _student(ctx, username)["completed_courses"]


@DOMAIN.check(
    "The final exam of course {course_code} is not at the same date and time as the exam of a course "
    "student {username} is enrolled in.",
    "The final exam of course {course_code} is at the same date and time as the exam of a course "
    "student {username} is enrolled in.",
)
def no_exam_conflict(ctx: Context, username: str, course_code: str) -> bool:
    new_course = _course(ctx, course_code)
    student = _student(ctx, username)
    new_exam = datetime.fromisoformat(new_course["exam_schedule"])
    for enrolled_code in student["enrolled_courses"]:
        if datetime.fromisoformat(_course(ctx, enrolled_code)["exam_schedule"]) == new_exam:
            return False
    return True


@DOMAIN.check(
    "The major of student {username} is one of the majors course {course_code} is open to.",
    "The major of student {username} is not one of the majors course {course_code} is open to.",
)
def meets_major_restriction(ctx: Context, username: str, course_code: str) -> bool:
    student = _student(ctx, username)
    course = _course(ctx, course_code)
    major = student["major"]  # read before the course's list, as published
    allowed = course.get("restricted_to_majors", [])
    if not allowed and ctx.options.get(EMPTY_MAJOR_RESTRICTION_IS_OPEN, False):
        return True
    return major in allowed


# ---- dropping ------------------------------------------------------------------------------------
@DOMAIN.check(
    "The student {username} is enrolled in course {course_code}.",
    "The student {username} is not enrolled in course {course_code}.",
)
def course_enrolled_by_user(ctx: Context, username: str, course_code: str) -> bool:
    return course_code in _student(ctx, username)["enrolled_courses"]


@DOMAIN.check(
    "After dropping course {course_code}, student {username} still has at least {min_credits_drop} current credits.",
    "After dropping course {course_code}, student {username} would have fewer than {min_credits_drop} current credits.",
)
def maintains_min_credits(ctx: Context, username: str, course_code: str) -> bool:
    student = _student(ctx, username)
    course = _course(ctx, course_code)
    return cast(bool, student["current_credits"] - course["credits"] >= ctx.params["min_credits_drop"])


@DOMAIN.check(
    "The withdrawal deadline has not passed yet.",
    "The withdrawal deadline has passed.",
)
def within_withdrawal_period(ctx: Context) -> bool:
    deadline = datetime.fromisoformat(_calendar(ctx)["withdrawal_deadline"])
    return _now(ctx) <= deadline


# ---- graduation ----------------------------------------------------------------------------------
@DOMAIN.check(
    "The student {username} has completed every required course of their major.",
    "The student {username} has not completed every required course of their major.",
)
def major_requirements_met(ctx: Context, username: str) -> bool:
    student = _student(ctx, username)
    major = _read(ctx, "internal_get_major_info", major=student["major"])
    return all(code in student["completed_courses"] for code in major.get("required_courses", []))


@DOMAIN.check(
    f"The student {{username}} has completed at least {GEN_ED_MIN_COURSES} general education courses "
    f"(codes starting with {GEN_ED_PREFIX}).",
    f"The student {{username}} has completed fewer than {GEN_ED_MIN_COURSES} general education courses "
    f"(codes starting with {GEN_ED_PREFIX}).",
)
def gen_ed_requirements_met(ctx: Context, username: str) -> bool:
    completed = _student(ctx, username)["completed_courses"]
    return len([code for code in completed if code.startswith(GEN_ED_PREFIX)]) >= GEN_ED_MIN_COURSES


@DOMAIN.check(
    "The student {username} has completed at least {graduation_credit_requirement} credits.",
    "The student {username} has completed fewer than {graduation_credit_requirement} credits.",
)
def credit_requirement_met(ctx: Context, username: str) -> bool:
    return cast(
        bool, _student(ctx, username)["completed_credits"] >= ctx.params["graduation_credit_requirement"]
    )


@DOMAIN.check(
    "The GPA of student {username} is at least {min_gpa_graduation}.",
    "The GPA of student {username} is below {min_gpa_graduation}.",
)
def gpa_requirement_met(ctx: Context, username: str) -> bool:
    return cast(bool, _student(ctx, username)["gpa"] >= ctx.params["min_gpa_graduation"])


@DOMAIN.check(
    "The student {username} owes no tuition (balance zero or less).",
    "The student {username} still owes tuition (balance above zero).",
)
def tuition_balance_zero(ctx: Context, username: str) -> bool:
    return cast(bool, _student(ctx, username)["tuition_balance"] <= 0)


@DOMAIN.check(
    "The graduation deadline has not passed yet.",
    "The graduation deadline has passed.",
)
def before_graduation_deadline(ctx: Context) -> bool:
    deadline = datetime.fromisoformat(_calendar(ctx)["graduation_deadline"])
    return _now(ctx) <= deadline


@DOMAIN.check(
    "The student {username} is not on academic probation.",
    "The student {username} is on academic probation.",
)
def not_on_probation(ctx: Context, username: str) -> bool:
    return cast(bool, _student(ctx, username)["academic_status"].lower() != "probation")


# ---- financial aid -------------------------------------------------------------------------------
@DOMAIN.check(
    f"The student {{username}} is enrolled at least half time ({HALF_TIME_MIN_CREDITS} or more current credits).",
    f"The student {{username}} is enrolled less than half time (fewer than {HALF_TIME_MIN_CREDITS} current credits).",
)
def meets_half_time_enrollment(ctx: Context, username: str) -> bool:
    return cast(bool, _student(ctx, username)["current_credits"] >= HALF_TIME_MIN_CREDITS)


@DOMAIN.check(
    "The student {username} has received financial aid for fewer than {max_financial_aid_quarters} quarters.",
    "The student {username} has already received financial aid for {max_financial_aid_quarters} quarters or more.",
)
def financial_aid_quota_available(ctx: Context, username: str) -> bool:
    return cast(
        bool, _student(ctx, username)["financial_aid_quarters"] < ctx.params["max_financial_aid_quarters"]
    )


@DOMAIN.check(
    "The GPA of student {username} is at least {min_gpa_financial_aid}, the minimum for financial aid.",
    "The GPA of student {username} is below {min_gpa_financial_aid}, the minimum for financial aid.",
)
def meets_min_gpa_for_aid(ctx: Context, username: str) -> bool:
    return cast(bool, _student(ctx, username)["gpa"] >= ctx.params["min_gpa_financial_aid"])


@DOMAIN.check(
    "The income of student {username} is at most {max_income_financial_aid}.",
    "The income of student {username} is above {max_income_financial_aid}.",
)
def meets_income_requirements(ctx: Context, username: str) -> bool:
    return cast(bool, _student(ctx, username)["income"] <= ctx.params["max_income_financial_aid"])


@DOMAIN.check(
    "The residency of student {username} is in-state or public.",
    "The residency of student {username} is neither in-state nor public.",
)
def valid_residency_status(ctx: Context, username: str) -> bool:
    return _student(ctx, username)["residency"] in ELIGIBLE_RESIDENCIES


# ---- changing major ------------------------------------------------------------------------------
@DOMAIN.check(
    "The GPA of student {username} meets the minimum GPA of the major {new_major}.",
    "The GPA of student {username} is below the minimum GPA of the major {new_major}.",
)
def meets_major_gpa_requirement(ctx: Context, username: str, new_major: str) -> bool:
    student = _student(ctx, username)
    major = _read(ctx, "internal_get_major_info", major=new_major)
    return cast(bool, student["gpa"] >= major.get("min_gpa", 0))


@DOMAIN.check(
    "The major change deadline has not passed yet (compared by date).",
    "The major change deadline has passed (compared by date).",
)
def within_major_change_period(ctx: Context) -> bool:
    deadline = datetime.fromisoformat(_calendar(ctx)["major_change_deadline"]).date()
    return _now(ctx).date() <= deadline


@DOMAIN.check(
    "The student {username} has changed major fewer than {max_major_changes} times.",
    "The student {username} has already changed major {max_major_changes} times or more.",
)
def under_max_major_changes(ctx: Context, username: str) -> bool:
    return cast(bool, _student(ctx, username)["major_changes"] < ctx.params["max_major_changes"])


@DOMAIN.check(
    "The student {username} has completed at least {min_credits_major_change} credits.",
    "The student {username} has completed fewer than {min_credits_major_change} credits.",
)
def has_min_credits_for_major_change(ctx: Context, username: str) -> bool:
    return cast(bool, _student(ctx, username)["completed_credits"] >= ctx.params["min_credits_major_change"])


@DOMAIN.check(
    "The major {new_major} has fewer declared students than its capacity.",
    "The major {new_major} is full: its declared students reach its capacity.",
)
def major_has_capacity(ctx: Context, new_major: str) -> bool:
    major = _read(ctx, "internal_get_major_info", major=new_major)
    declared = _read(ctx, "internal_get_number_of_students_for_major", major=new_major)
    return cast(bool, declared < major["capacity"])


# ---- declaring a minor ---------------------------------------------------------------------------
@DOMAIN.check(
    "The major of student {username} is not among the majors excluded by the minor {minor}.",
    "The major of student {username} is among the majors excluded by the minor {minor}.",
)
def minor_compatible_with_major(ctx: Context, username: str, minor: str) -> bool:
    student = _student(ctx, username)
    minor_info = _read(ctx, "internal_get_minor_info", minor=minor)
    return student["major"] not in minor_info.get("incompatible_majors", [])


@DOMAIN.check(
    "The student {username} has declared fewer than {max_minors} minors.",
    "The student {username} has already declared {max_minors} minors or more.",
)
def under_max_minors(ctx: Context, username: str) -> bool:
    return cast(bool, len(_student(ctx, username)["minors"]) < ctx.params["max_minors"])


@DOMAIN.check(
    "The minor {minor} shares at most {max_overlap_minor_major} required courses with the major of student {username}.",
    "The minor {minor} shares more than {max_overlap_minor_major} required courses with the major of student {username}.",
)
def minor_course_overlap_check(ctx: Context, username: str, minor: str) -> bool:
    student = _student(ctx, username)
    minor_info = _read(ctx, "internal_get_minor_info", minor=minor)
    major = _read(ctx, "internal_get_major_info", major=student["major"])
    minor_courses = minor_info.get("required_courses", [])
    major_courses = major.get("required_courses", [])
    return cast(bool, len(set(minor_courses) & set(major_courses)) <= ctx.params["max_overlap_minor_major"])


@DOMAIN.check(
    "The GPA of student {username} meets the minimum GPA of the minor {minor}.",
    "The GPA of student {username} is below the minimum GPA of the minor {minor}.",
)
def meets_minor_gpa_requirement(ctx: Context, username: str, minor: str) -> bool:
    student = _student(ctx, username)
    minor_info = _read(ctx, "internal_get_minor_info", minor=minor)
    return cast(bool, student["gpa"] >= minor_info.get("min_gpa", 2.0))


@DOMAIN.check(
    "The student {username} has completed every prerequisite course of the minor {minor}.",
    "The student {username} is missing a prerequisite course of the minor {minor}.",
)
def meets_minor_prerequisites(ctx: Context, username: str, minor: str) -> bool:
    student = _student(ctx, username)
    minor_info = _read(ctx, "internal_get_minor_info", minor=minor)
    # The student's record is only read if the minor has a prerequisite (lazy, as published).
    return all(code in student["completed_courses"] for code in minor_info.get("prerequisites", []))


@DOMAIN.check(
    "The minor declaration deadline has not passed yet.",
    "The minor declaration deadline has passed.",
)
def within_minor_declaration_period(ctx: Context) -> bool:
    deadline = datetime.fromisoformat(_calendar(ctx)["minor_declaration_deadline"])
    return _now(ctx) <= deadline


# ---- constraints that are tools ------------------------------------------------------------------
DOMAIN.describe(
    "login_user",
    "The student {username} signs in successfully with password {password}.",
    "The student {username} cannot sign in with password {password}.",
)
DOMAIN.describe(
    "internal_check_username_exists",
    "A student with username {username} is on record.",
    "No student with username {username} is on record.",
)
DOMAIN.describe(
    "internal_check_course_exists",
    "Course {course_code} is in the catalogue.",
    "Course {course_code} is not in the catalogue.",
)
DOMAIN.describe(
    "internal_check_major_exists",
    "The major {major} is offered.",
    "The major {major} is not offered.",
)
DOMAIN.describe(
    "internal_check_minor_exists",
    "The minor {minor} is offered.",
    "The minor {minor} is not offered.",
)
