"""Signing in and staying signed in: sessions, API tokens, the login rate limit (no HTTP).

A session or API token is 32 random bytes (``secrets.token_urlsafe``) of
which only the SHA-256 is stored (:func:`~rankscope.services.accounts.hash_token`),
so a copy of the database opens no account. Signing in costs one argon2
verification whoever asks: an unknown name, a user without a password and a
deactivated user are checked against a dummy hash, so the time taken says
nothing of which names exist. Users and their passwords are
:mod:`rankscope.services.accounts`.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy import select

from rankscope.errors import AuthError, NotFoundError
from rankscope.services.accounts import (
    MAX_PASSWORD,
    Actor,
    actor_of,
    hash_token,
    verify_password,
)
from rankscope.services.limits import MAX_NAME, MAX_USER_NAME, check_text
from rankscope.store.models import utcnow
from rankscope.store.models_app import ApiToken, User, UserSession

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.store.db import Store

__all__ = [
    "SESSION_LIFETIME",
    "LoginLimiter",
    "TokenInfo",
    "authenticate",
    "create_session",
    "create_token",
    "end_session",
    "list_tokens",
    "resolve_session",
    "resolve_token",
    "revoke_token",
]

SESSION_LIFETIME = timedelta(days=7)


@dataclass(frozen=True)
class TokenInfo:
    """An API token as listed (never its secret)."""

    id: int
    name: str
    user: str
    created_at: str
    last_used_at: str | None
    revoked: bool


def authenticate(store: Store, name: str, password: str) -> Actor:
    """The active user with this name and password (AuthError otherwise, same words).

    Exactly one argon2 verification runs whatever the name (see the module docs).
    """
    if (len(name) > MAX_USER_NAME or "\x00" in name or len(password) > MAX_PASSWORD
            or "\x00" in password):
        verify_password(None, password[:MAX_PASSWORD])  # as long as any other answer
        raise AuthError("wrong name or password")
    with store.read() as session:
        user = session.scalar(select(User).where(User.name == name))
        stored = user.password_hash if user is not None else None
        active = user is not None and user.active
        actor = actor_of(user) if user is not None else None
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
        return actor_of(row[0])


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
    check_text(token_name, "the token's name", MAX_NAME)
    check_text(user_name, "the user name", MAX_USER_NAME)
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
        actor = actor_of(user)
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
