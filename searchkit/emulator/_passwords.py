"""The emulator's account passwords: salted PBKDF2 hashes, checked in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets

__all__ = ["DUMMY_HASH", "PBKDF2_ITERATIONS", "check_password", "hash_password"]

# Modest on purpose: the hash only guards emulator accounts in a local SQLite file, and
# every account added and every new credential seen pays it (verified ones are then cached
# in memory, never on disk), which a test suite starting many emulators feels.
PBKDF2_ITERATIONS = 20_000


def hash_password(password: str) -> str:
    """Return a salted PBKDF2 hash of ``password``, as stored."""
    salt = secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, PBKDF2_ITERATIONS)
    return f"pbkdf2_sha256${PBKDF2_ITERATIONS}${salt.hex()}${digest.hex()}"


def check_password(stored: str, password: str) -> bool:
    """Return whether ``password`` matches a hash made by :func:`hash_password`."""
    try:
        scheme, iterations, salt, expected = stored.split("$")
        if scheme != "pbkdf2_sha256":
            return False
        digest = hashlib.pbkdf2_hmac(
            "sha256", password.encode(), bytes.fromhex(salt), int(iterations)
        )
    except ValueError:
        return False
    return hmac.compare_digest(digest.hex(), expected)


# Verifying against this keeps an unknown user as slow as a wrong password.
DUMMY_HASH = f"pbkdf2_sha256${PBKDF2_ITERATIONS}${'00' * 16}${'00' * 32}"
