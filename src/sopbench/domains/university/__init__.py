"""The university domain: course enrolment, dropping courses, graduation, financial aid, majors and minors.

Students sign in, then ask for academic services; each service has a standard operating procedure
(prerequisites, deadlines, credit limits, GPA thresholds) that an assistant must verify with the
internal look-up tools before acting. Tables: ``sop.json``; tools: ``tools.py``; checks and their
wording: ``constraints.py``; database layout and session: ``state.py``.
"""

from pathlib import Path

from sopbench.domains import REQUIRED, Domain, register_domain

from .state import UniversityDatabase, new_session

EMPTY_MAJOR_RESTRICTION_IS_OPEN = "empty_major_restriction_is_open"

DOMAIN = register_domain(
    Domain.from_sop_file(
        "university",
        Path(__file__).with_name("sop.json"),
        system_name="University",
        new_session=new_session,
        database_model=UniversityDatabase,
        description=(
            "You work at a university registrar's desk. Students come to you to register for or withdraw "
            "from courses, file for graduation, apply for financial aid, switch their major or add a minor; "
            "you carry out these requests on the student records, keeping to the university's rules for "
            "each of them."
        ),
        options={
            # The published check says a course whose ``restricted_to_majors`` list is empty is open
            # to nobody, while the published field description says an empty list means "no
            # restriction". The tasks never exercise the difference and were verified with the code,
            # so the code's reading is the default; True gives the described reading.
            EMPTY_MAJOR_RESTRICTION_IS_OPEN: False,
        },
        # The published strict class gave these methods an explicit signature (all others took
        # ``**kwargs``): arguments that do not fit raised TypeError before any check, and a
        # missing optional credential defaulted to None.
        # Its university class delegated only login/logout and the services: the ``internal_*``
        # look-ups existed on the lenient system alone (spec §3.1).
        published_strict_signatures={
            "login_user": {"username": REQUIRED, "password": REQUIRED},
            "logout_user": {"username": REQUIRED},
            "enroll_course": {"username": REQUIRED, "course_code": REQUIRED},
            "drop_course": {"username": REQUIRED, "course_code": REQUIRED},
            "request_graduation": {"username": REQUIRED},
            "apply_financial_aid": {"username": REQUIRED},
            "change_major": {"username": REQUIRED, "new_major": REQUIRED},
            "declare_minor": {"username": REQUIRED, "minor": REQUIRED},
        },
        published_strict_lacks_internal_tools=True,
    )
)

from . import constraints, tools  # noqa: E402,F401  (registers the rules on DOMAIN)
