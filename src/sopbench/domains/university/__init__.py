"""The university domain: course enrolment, dropping courses, graduation, financial aid, majors and minors.

Students sign in, then ask for academic services; each service has a standard operating procedure
(prerequisites, deadlines, credit limits, GPA thresholds) that an assistant must verify with the
internal look-up tools before acting. Tables: ``sop.json``; tools: ``tools.py``; checks and their
wording: ``constraints.py``; database layout and session: ``state.py``.
"""

from pathlib import Path

from sopbench.domains import Domain, register_domain

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
    )
)

from . import constraints, tools  # noqa: E402,F401  (registers the rules on DOMAIN)
