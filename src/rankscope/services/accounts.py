"""Users, passwords, sessions, API tokens and the login rate limit (no HTTP here).

Passwords are hashed with argon2 (``argon2-cffi``'s defaults, RFC 9106's
second recommended profile); a session or API token is 32 random bytes
(``secrets.token_urlsafe``) of which only the SHA-256 is stored, so a copy of
the database opens no account. Roles: ``admin`` (manages users, may do
everything), ``curator`` (sets up query sets, endpoints and evaluations,
adjudicates), ``judge`` (grades).

Signing in costs one argon2 verification whoever asks: an unknown name, a
user without a password and a deactivated user are checked against a dummy
hash, so the time taken says nothing of which names exist. A password
change or reset ends the user's sessions (a user changing their own keeps
the session they change it from) and, when asked, revokes their API tokens.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy import select

from rankscope.errors import AuthError, ConflictError, DependencyError, NotFoundError, OptionError
from rankscope.services.limits import check_spec, spec_field
from rankscope.store.models import utcnow
from rankscope.store.models_app import ROLES, ApiToken, Rater, User, UserSession

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.store.db import Store

__all__ = [
    "SESSION_LIFETIME",
    "Actor",
    "LoginLimiter",
    "TokenInfo",
    "UserSpec",
    "UserUpdateSpec",
    "authenticate",
    "change_password",
    "create_session",
    "create_token",
    "create_user",
    "end_session",
    "get_user",
    "hash_token",
    "list_tokens",
    "list_users",
    "rater_for",
    "resolve_session",
    "resolve_token",
    "revoke_token",
    "update_user",
]

SESSION_LIFETIME = timedelta(days=7)
MIN_PASSWORD = 8
MAX_PASSWORD = 1024
"""Longer passwords are refused (each sign-in hashes the whole text)."""
MAX_NAME = 100
"""The longest user name (shorter than other names: it is shown on every page)."""


@dataclass(frozen=True)
class UserSpec:
    """A new user (admins only).

    Each field's meaning and limit are written once, here (``spec_field``): the
    service checks them and the API's input model is derived from them.
    """

    name: str = spec_field(doc=f"The user's name: 1 to {MAX_NAME} printable characters, no "
                           "spaces.", limit=MAX_NAME, label="a user name")
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


@dataclass(frozen=True)
class TokenInfo:
    """An API token as listed (never its secret)."""

    id: int
    name: str
    user: str
    created_at: str
    last_used_at: str | None
    revoked: bool


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


def _actor(user: User) -> Actor:
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
    if (not name or len(name) > MAX_NAME or any(c.isspace() or not c.isprintable() for c in name)):
        raise OptionError(f"a user name is 1 to {MAX_NAME} printable characters without "
                          f"spaces, not {name[:MAX_NAME]!r}")
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
        return _actor(user)

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
        return _actor(user)

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
        return _actor(user)


def list_users(store: Store) -> list[dict[str, object]]:
    """Every user: ``id, name, role, active, created_at``."""
    with store.read() as session:
        return [{"id": u.id, "name": u.name, "role": u.role, "active": u.active,
                 "created_at": u.created_at.isoformat()}
                for u in session.scalars(select(User).order_by(User.name))]


def authenticate(store: Store, name: str, password: str) -> Actor:
    """The active user with this name and password (AuthError otherwise, same words).

    Exactly one argon2 verification runs whatever the name (see the module docs).
    """
    if (len(name) > MAX_NAME or "\x00" in name or len(password) > MAX_PASSWORD
            or "\x00" in password):
        verify_password(None, password[:MAX_PASSWORD])  # as long as any other answer
        raise AuthError("wrong name or password")
    with store.read() as session:
        user = session.scalar(select(User).where(User.name == name))
        stored = user.password_hash if user is not None else None
        active = user is not None and user.active
        actor = _actor(user) if user is not None else None
    ok = verify_password(stored, password)  # argon2 even for no user: no timing hint
    if actor is None or not ok or not active:
        raise AuthError("wrong name or password")
    return actor


def create_session(store: Store, actor: Actor) -> str:
    """A new session for ``actor``; returns the token for the cookie (stored hashed)."""
    token = secrets.token_urlsafe(32)
    now = utcnow()

    def work(session: Session) -> None:
        session.add(UserSession(token_sha256=hash_token(token), user_id=actor.user_id,
                                created_at=now, expires_at=now + SESSION_LIFETIME))

    store.write(work)
    return token


def resolve_session(store: Store, token: str | None) -> Actor:
    """The user a session cookie signs in (AuthError when none, expired or inactive)."""
    if not token:
        raise AuthError("not signed in")
    with store.read(single=True) as session:
        row = session.execute(
            select(User, UserSession.expires_at).join(UserSession, UserSession.user_id == User.id)
            .where(UserSession.token_sha256 == hash_token(token))).first()
        if row is None or row[1] <= utcnow() or not row[0].active:
            raise AuthError("the session has ended; sign in again")
        return _actor(row[0])


def end_session(store: Store, token: str | None) -> None:
    """Sign out: the session's row is deleted (a session is not history)."""
    if not token:
        return
    digest = hash_token(token)

    def work(session: Session) -> None:
        for row in session.scalars(select(UserSession).where(UserSession.token_sha256 == digest)):
            session.delete(row)

    store.write(work)


def create_token(store: Store, user_name: str, token_name: str = "api") -> str:
    """A new API token for a user; the secret is returned once and stored hashed."""
    from rankscope.services.limits import MAX_NAME, check_text

    check_text(token_name, "the token's name", MAX_NAME)
    check_text(user_name, "the user name", MAX_NAME)
    token = "rs_" + secrets.token_urlsafe(32)

    def work(session: Session) -> None:
        user = session.scalar(select(User).where(User.name == user_name))
        if user is None:
            raise NotFoundError(f"no user named {user_name!r}")
        session.add(ApiToken(token_sha256=hash_token(token), user_id=user.id,
                             name=token_name, created_at=utcnow()))

    store.write(work)
    return token


def resolve_token(store: Store, token: str | None, *, touch: bool = True) -> Actor:
    """The user an API token belongs to (AuthError when unknown, revoked or inactive).

    ``touch`` records the time of use (at most once a minute per token).
    """
    if not token:
        raise AuthError("no API token (send Authorization: Bearer TOKEN)")
    digest = hash_token(token)
    with store.read(single=True) as session:
        row = session.execute(select(User, ApiToken).join(ApiToken, ApiToken.user_id == User.id)
                              .where(ApiToken.token_sha256 == digest)).first()
        if row is None or row[1].revoked_at is not None or not row[0].active:
            raise AuthError("unknown or revoked API token")
        user, api = row
        last = api.last_used_at
        token_id = api.id
        actor = _actor(user)
    if touch and (last is None or utcnow() - last > timedelta(minutes=1)):
        def work(session: Session) -> None:
            row = session.get(ApiToken, token_id)
            if row is not None:
                row.last_used_at = utcnow()

        store.write(work)
    return actor


def list_tokens(store: Store, user_id: int | None = None) -> list[TokenInfo]:
    """API tokens (of one user, or all), newest first."""
    with store.read() as session:
        query = select(ApiToken, User.name).join(User, ApiToken.user_id == User.id)
        if user_id is not None:
            query = query.where(ApiToken.user_id == user_id)
        return [TokenInfo(t.id, t.name, name, t.created_at.isoformat(),
                          t.last_used_at.isoformat() if t.last_used_at else None,
                          t.revoked_at is not None)
                for t, name in session.execute(query.order_by(ApiToken.id.desc()))]


def revoke_token(store: Store, token_id: int, actor: Actor) -> None:
    """Revoke a token (its owner or an admin)."""
    def work(session: Session) -> None:
        row = session.get(ApiToken, token_id)
        if row is None or (row.user_id != actor.user_id and not actor.is_admin):
            raise NotFoundError(f"no API token #{token_id}")
        row.revoked_at = row.revoked_at or utcnow()

    store.write(work)


def rater_for(session: Session, actor: Actor) -> Rater:
    """The rater row of a user (created on first use)."""
    rater = session.scalar(select(Rater).where(Rater.user_id == actor.user_id))
    if rater is None:
        rater = Rater(name=actor.name, kind="person", user_id=actor.user_id,
                      created_at=utcnow())
        session.add(rater)
        session.flush()
    return rater


class LoginLimiter:
    """Failed sign-ins allowed per account and address, and per address, in a sliding window.

    An account is limited per address it is tried from, never as a whole: an
    attacker failing on purpose from their address does not lock its owner
    out, who signs in from another. Each address is limited over every
    account it tries.

    Parameters
    ----------
    per_account, per_address : int
        Failures allowed within ``window`` seconds for one account from one
        address, and for one address over all accounts (default 5 and 20
        in 5 minutes).
    clock : callable, optional
        Seconds (monotonic); tests pass their own.

    Examples
    --------
    >>> limiter = LoginLimiter(per_account=2, per_address=10, window=60, clock=lambda: 0.0)
    >>> limiter.failed("ann", "10.0.0.1"); limiter.failed("ann", "10.0.0.1")
    >>> limiter.allowed("ann", "10.0.0.1"), limiter.allowed("ann", "10.0.0.2")
    (False, True)
    """

    def __init__(self, per_account: int = 5, per_address: int = 20, window: float = 300.0,
                 clock: Callable[[], float] | None = None) -> None:
        self.per_account = per_account
        self.per_address = per_address
        self.window = window
        self._clock = clock or time.monotonic
        self._fails: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        times = self._fails.setdefault(key, deque())
        while times and now - times[0] > self.window:
            times.popleft()
        return times

    @staticmethod
    def _pair(account: str, address: str) -> str:
        return "a:" + account.lower() + "\x00" + address

    def allowed(self, account: str, address: str) -> bool:
        """Whether another attempt may be tried now."""
        now = float(self._clock())
        with self._lock:
            return (len(self._recent(self._pair(account, address), now)) < self.per_account
                    and len(self._recent("ip:" + address, now)) < self.per_address)

    def failed(self, account: str, address: str) -> None:
        """Count a failed attempt."""
        now = float(self._clock())
        with self._lock:
            self._recent(self._pair(account, address), now).append(now)
            self._recent("ip:" + address, now).append(now)
        self._prune(now)

    def succeeded(self, account: str, address: str) -> None:
        """A success clears the account's failures from that address (not the address's)."""
        with self._lock:
            self._fails.pop(self._pair(account, address), None)

    def _prune(self, now: float) -> None:
        """Forget keys with no failure in the window (an attacker's names never pile up)."""
        with self._lock:
            if len(self._fails) < 10_000:
                return
            for key in [k for k, times in self._fails.items()
                        if not times or now - times[-1] > self.window]:
                del self._fails[key]
