"""Users, their roles and passwords (no HTTP here).

Passwords are hashed with argon2 (``argon2-cffi``'s defaults, RFC 9106's
second recommended profile). Roles: ``admin`` (manages users, may do
everything), ``curator`` (sets up query sets, endpoints and evaluations,
adjudicates), ``judge`` (grades). A password change or reset ends the
user's sessions (a user changing their own keeps the session they change it
from) and, when asked, revokes their API tokens. Signing in, sessions, API
tokens and the login rate limit are :mod:`rankscope.services.sessions`.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select

from rankscope.errors import AuthError, ConflictError, DependencyError, NotFoundError, OptionError
from rankscope.services.limits import (
    MAX_NAME,
    MAX_USER_NAME,
    check_spec,
    spec_field,
)
from rankscope.store.models import utcnow
from rankscope.store.models_app import ROLES, ApiToken, Rater, User, UserSession

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.store.db import Store

__all__ = [
    "MAX_PASSWORD",
    "MIN_PASSWORD",
    "Actor",
    "UserSpec",
    "UserUpdateSpec",
    "actor_of",
    "change_password",
    "create_user",
    "get_user",
    "hash_password",
    "hash_token",
    "list_users",
    "rater_for",
    "update_user",
    "verify_password",
]

MIN_PASSWORD = 8
MAX_PASSWORD = 1024
"""Longer passwords are refused (each sign-in hashes the whole text)."""


@dataclass(frozen=True)
class UserSpec:
    """A new user (admins only).

    Each field's meaning and limit are written once, here (``spec_field``): the
    service checks them and the API's input model is derived from them.
    """

    name: str = spec_field(doc=f"The user's name: 1 to {MAX_USER_NAME} printable characters, "
                           "no spaces.", limit=MAX_USER_NAME, label="a user name")
    role: str = spec_field(doc=f"Their role: {', '.join(ROLES)}.", limit=MAX_NAME,
                           label="the role")
    password: str | None = spec_field(
        None, doc=f"Their password ({MIN_PASSWORD} to {MAX_PASSWORD} characters); none: they "
        "cannot sign in until one is set.", limit=MAX_PASSWORD, label="the password")


@dataclass(frozen=True)
class UserUpdateSpec:
    """What an admin changes of a user (a field left out stays as it is).

    A new password ends every session of the user; ``revoke_tokens`` also
    revokes their API tokens.
    """

    role: str | None = spec_field(None, doc=f"Their role: {', '.join(ROLES)}.",
                                  limit=MAX_NAME, label="the role")
    active: bool | None = spec_field(None, doc="Whether they may sign in.")
    password: str | None = spec_field(
        None, doc=f"A new password ({MIN_PASSWORD} to {MAX_PASSWORD} characters).",
        limit=MAX_PASSWORD, label="the password")
    revoke_tokens: bool = spec_field(False, doc="Also revoke their API tokens.")


@dataclass(frozen=True)
class Actor:
    """Who is asking: a signed-in user (the services check roles against it)."""

    user_id: int
    name: str
    role: str

    @property
    def is_admin(self) -> bool:
        """Whether the user manages users (and may do everything)."""
        return self.role == "admin"


def _hasher() -> object:
    try:
        from argon2 import PasswordHasher
    except ImportError:
        raise DependencyError("argon2-cffi", "app", "password hashing") from None
    return PasswordHasher()


def hash_password(password: str) -> str:
    """The argon2id hash of ``password`` (salted; a new one every call)."""
    from argon2 import PasswordHasher

    return PasswordHasher().hash(password)


_DUMMY_HASH: list[str] = []
_DUMMY_LOCK = threading.Lock()


def _dummy_hash() -> str:
    """An argon2 hash of a random password, made once: what a missing user is checked against."""
    with _DUMMY_LOCK:
        if not _DUMMY_HASH:
            _DUMMY_HASH.append(hash_password(secrets.token_urlsafe(24)))
        return _DUMMY_HASH[0]


def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches the stored hash (False for no hash).

    Without a hash the password is verified against a dummy one (and False
    returned), so both answers take one argon2 verification.
    """
    from argon2 import PasswordHasher
    from argon2.exceptions import InvalidHashError, VerificationError

    try:
        ok = bool(PasswordHasher().verify(stored or _dummy_hash(), password))
    except (VerificationError, InvalidHashError):
        return False
    return ok and bool(stored)


def hash_token(token: str) -> str:
    """The SHA-256 (hex) under which a session or API token is stored.

    Examples
    --------
    >>> hash_token("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise OptionError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    return role


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise OptionError(f"a password needs at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD or "\x00" in password:
        raise OptionError(f"a password has at most {MAX_PASSWORD} characters and no NUL")


def actor_of(user: User) -> Actor:
    """The user as who is asking."""
    return Actor(user.id, user.name, user.role)


def create_user(store: Store, name: str, role: str, password: str | None) -> Actor:
    """Add a user (``password`` None: the user cannot sign in until one is set).

    Raises
    ------
    OptionError
        An empty name, an unknown role, a password shorter than 8 characters.
    ConflictError
        The name is taken.
    """
    check_spec(UserSpec(name, role, password))
    name = name.strip()
    if (not name or len(name) > MAX_USER_NAME
            or any(c.isspace() or not c.isprintable() for c in name)):
        raise OptionError(f"a user name is 1 to {MAX_USER_NAME} printable characters without "
                          f"spaces, not {name[:MAX_USER_NAME]!r}")
    _check_role(role)
    digest = None
    if password is not None:
        _check_password(password)
        _hasher()
        digest = hash_password(password)

    def work(session: Session) -> Actor:
        if session.scalar(select(User.id).where(User.name == name)) is not None:
            raise ConflictError(f"a user named {name!r} exists")
        rater = session.scalar(select(Rater).where(Rater.name == name))
        if rater is not None:  # an imported rater's or an LLM judge's: their grades keep it
            raise ConflictError(f"the name {name!r} is taken by a rater of kind {rater.kind} "
                                "(imported grades or an LLM judge): choose another")
        user = User(name=name, role=role, password_hash=digest, active=True,
                    created_at=utcnow())
        session.add(user)
        session.flush()
        session.add(Rater(name=name, kind="person", user_id=user.id, created_at=utcnow()))
        return actor_of(user)

    return store.write(work)


def _end_sessions(session: Session, user_id: int, keep: str | None = None) -> int:
    """Delete the user's sessions (but the one whose token is ``keep``); how many ended."""
    kept = hash_token(keep) if keep else None
    ended = 0
    for row in session.scalars(select(UserSession).where(UserSession.user_id == user_id)):
        if row.token_sha256 != kept:
            session.delete(row)
            ended += 1
    return ended


def _revoke_tokens(session: Session, user_id: int) -> int:
    now = utcnow()
    revoked = 0
    for row in session.scalars(select(ApiToken).where(ApiToken.user_id == user_id,
                                                      ApiToken.revoked_at.is_(None))):
        row.revoked_at = now
        revoked += 1
    return revoked


def update_user(store: Store, user_id: int, *, role: str | None = None,
                active: bool | None = None, password: str | None = None,
                revoke_tokens: bool = False) -> Actor:
    """Change a user's role, activity or password (an admin's reset).

    Deactivating and a new password end every session of the user;
    ``revoke_tokens`` also revokes their API tokens (a reset after a leak).
    """
    check_spec(UserUpdateSpec(role, active, password, revoke_tokens))
    if role is not None:
        _check_role(role)
    digest = None
    if password is not None:
        _check_password(password)
        digest = hash_password(password)

    def work(session: Session) -> Actor:
        user = session.get(User, user_id)
        if user is None:
            raise NotFoundError(f"no user #{user_id}")
        if role is not None:
            user.role = role
        if digest is not None:
            user.password_hash = digest
            _end_sessions(session, user_id)
        if active is not None:
            user.active = active
            if not active:
                _end_sessions(session, user_id)
        if revoke_tokens:
            _revoke_tokens(session, user_id)
        return actor_of(user)

    return store.write(work)


def change_password(store: Store, actor: Actor, current: str, new: str, *,
                    keep_session: str | None = None, revoke_tokens: bool = False) -> int:
    """A user changes their own password; returns how many other sessions ended.

    Every session of the user ends but ``keep_session`` (the token of the
    one the change is made from); ``revoke_tokens`` also revokes their API
    tokens.

    Raises
    ------
    AuthError
        The current password is wrong.
    OptionError
        The new password is too short or too long.
    """
    _check_password(new)
    with store.read() as session:
        user = session.get(User, actor.user_id)
        stored = user.password_hash if user is not None else None
    if not verify_password(stored, current[:MAX_PASSWORD]):
        raise AuthError("the current password is wrong")
    digest = hash_password(new)

    def work(session: Session) -> int:
        user = session.get(User, actor.user_id)
        if user is None or not user.active:
            raise AuthError("the session has ended; sign in again")
        user.password_hash = digest
        ended = _end_sessions(session, user.id, keep_session)
        if revoke_tokens:
            _revoke_tokens(session, user.id)
        return ended

    return store.write(work)


def get_user(store: Store, name: str) -> Actor:
    """A user by name (NotFoundError when there is none)."""
    with store.read() as session:
        user = session.scalar(select(User).where(User.name == name))
        if user is None:
            raise NotFoundError(f"no user named {name!r}")
        return actor_of(user)


def list_users(store: Store) -> list[dict[str, object]]:
    """Every user: ``id, name, role, active, created_at``."""
    with store.read() as session:
        return [{"id": u.id, "name": u.name, "role": u.role, "active": u.active,
                 "created_at": u.created_at.isoformat()}
                for u in session.scalars(select(User).order_by(User.name))]


def rater_for(session: Session, actor: Actor) -> Rater:
    """The rater row of a user (created on first use)."""
    rater = session.scalar(select(Rater).where(Rater.user_id == actor.user_id))
    if rater is None:
        rater = Rater(name=actor.name, kind="person", user_id=actor.user_id,
                      created_at=utcnow())
        session.add(rater)
        session.flush()
    return rater

