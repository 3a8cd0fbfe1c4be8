"""Projects and who may see them: no access across projects.

A user sees a project only as a member of it (admins see every project);
another project's objects are answered as "not found", never as
"forbidden", so their existence is not revealed. Inside a project the
member's role decides what they may do: ``judge`` < ``curator`` < ``admin``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select

from rankscope.errors import ConflictError, ForbiddenError, NotFoundError, OptionError
from rankscope.services.limits import MAX_NAME, MAX_USER_NAME, check_spec, spec_field
from rankscope.store.models import Project, utcnow
from rankscope.store.models_app import ROLES, Membership, User

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = [
    "RANK",
    "MemberSpec",
    "ProjectSpec",
    "ProjectView",
    "add_member",
    "create_project",
    "effective_role",
    "list_members",
    "list_projects",
    "project_role",
    "remove_member",
    "require_project",
    "require_role",
]

RANK = {"judge": 1, "curator": 2, "admin": 3}
"""What each role may do, ordered: a role may do everything of the roles below it."""


@dataclass(frozen=True)
class ProjectView:
    """A project as a user sees it, with their role in it."""

    id: int
    name: str
    role: str


def project_role(session: Session, actor: Actor, project_id: int) -> tuple[Project, str]:
    """The project and the actor's role in it (NotFoundError when they are not a member).

    One statement: the project with the actor's membership.
    """
    row = session.execute(select(Project, Membership.role).outerjoin(
        Membership, (Membership.project_id == Project.id)
        & (Membership.user_id == actor.user_id)).where(Project.id == project_id)).first()
    if row is None:
        raise NotFoundError(f"no project #{project_id}")
    return row[0], effective_role(actor, project_id, row[1])


def effective_role(actor: Actor, project_id: int, membership: str | None) -> str:
    """The actor's role in a project from their membership's role (None: not a member).

    A member never has more rights in a project than their account's role; an
    admin is one in every project. NotFoundError when they are not a member.
    """
    if actor.is_admin:
        return "admin"
    if membership is None:
        raise NotFoundError(f"no project #{project_id}")
    return min(membership, actor.role, key=lambda r: RANK[r])


def require_role(role: str, at_least: str) -> None:
    """ForbiddenError when ``role`` is less than ``at_least``."""
    if RANK[role] < RANK[at_least]:
        raise ForbiddenError(f"a {role} may not do this (it needs a {at_least})")


def require_project(session: Session, actor: Actor, project_id: int,
                    at_least: str = "judge") -> Project:
    """The project, when the actor's role in it is ``at_least`` (403) and they see it (404)."""
    project, role = project_role(session, actor, project_id)
    require_role(role, at_least)
    return project


@dataclass(frozen=True)
class ProjectSpec:
    """A new project.

    Each field's meaning and limit are written once, here (``spec_field``): the
    service checks them and the API's input model is derived from them.
    """

    name: str = spec_field(doc="The project's name (unique).", limit=MAX_NAME,
                           label="a project name")


@dataclass(frozen=True)
class MemberSpec:
    """A member to add (or whose role to change)."""

    name: str = spec_field(doc="The user's name.", limit=MAX_USER_NAME, label="the user name")
    role: str = spec_field("judge", doc=f"Their role in the project: {', '.join(ROLES)}.",
                           limit=MAX_NAME, label="the role")


def create_project(store: Store, actor: Actor, name: str) -> ProjectView:
    """A new project; its creator (a curator or admin) becomes its curator."""
    if RANK[actor.role] < RANK["curator"]:
        raise ForbiddenError("only curators and admins create projects")
    check_spec(ProjectSpec(name))
    name = name.strip()
    if not name:
        raise OptionError(f"a project name is 1 to {MAX_NAME} characters")

    def work(session: Session) -> ProjectView:
        if session.scalar(select(Project.id).where(Project.name == name)) is not None:
            raise ConflictError(f"a project named {name!r} exists")
        project = Project(name=name, created_at=utcnow())
        session.add(project)
        session.flush()
        session.add(Membership(user_id=actor.user_id, project_id=project.id,
                               role="admin" if actor.is_admin else "curator"))
        return ProjectView(project.id, project.name, actor.role)

    return store.write(work)


def list_projects(store: Store, actor: Actor) -> list[ProjectView]:
    """The projects the actor sees, by name."""
    with store.read() as session:
        if actor.is_admin:
            return [ProjectView(p.id, p.name, "admin")
                    for p in session.scalars(select(Project).order_by(Project.name))]
        rows = session.execute(select(Project, Membership.role)
                               .join(Membership, Membership.project_id == Project.id)
                               .where(Membership.user_id == actor.user_id)
                               .order_by(Project.name)).all()
        return [ProjectView(p.id, p.name, min(r, actor.role, key=lambda x: RANK[x]))
                for p, r in rows]


def get_project(store: Store, actor: Actor, project_id: int) -> ProjectView:
    """One project the actor sees (NotFoundError otherwise)."""
    with store.read() as session:
        project, role = project_role(session, actor, project_id)
        return ProjectView(project.id, project.name, role)


def add_member(store: Store, actor: Actor, project_id: int, user_name: str, role: str) -> None:
    """Add (or change the role of) a member; curators of the project and admins may."""
    check_spec(MemberSpec(user_name, role))
    if role not in ROLES:
        raise OptionError(f"role must be one of {', '.join(ROLES)}, not {role!r}")

    def work(session: Session) -> None:
        require_project(session, actor, project_id, "curator")
        user = session.scalar(select(User).where(User.name == user_name))
        if user is None:
            raise NotFoundError(f"no user named {user_name!r}")
        row = session.scalar(select(Membership).where(Membership.project_id == project_id,
                                                      Membership.user_id == user.id))
        if row is None:
            session.add(Membership(user_id=user.id, project_id=project_id, role=role))
        else:
            row.role = role

    store.write(work)


def remove_member(store: Store, actor: Actor, project_id: int, user_name: str) -> None:
    """Remove a member (their grades stay)."""
    def work(session: Session) -> None:
        require_project(session, actor, project_id, "curator")
        user = session.scalar(select(User).where(User.name == user_name))
        if user is None:
            raise NotFoundError(f"no user named {user_name!r}")
        for row in session.scalars(select(Membership).where(
                Membership.project_id == project_id, Membership.user_id == user.id)):
            session.delete(row)

    store.write(work)


def list_members(store: Store, actor: Actor, project_id: int) -> list[dict[str, str]]:
    """``name, role`` of every member."""
    with store.read() as session:
        require_project(session, actor, project_id, "judge")
        rows = session.execute(select(User.name, Membership.role)
                               .join(Membership, Membership.user_id == User.id)
                               .where(Membership.project_id == project_id)
                               .order_by(User.name)).all()
        return [{"name": n, "role": r} for n, r in rows]
