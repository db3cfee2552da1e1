from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/api/orgs/{orgId}/identity-providers", tags=["identity providers"])
