from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/api/orgs/{orgId}/apis", tags=["apis"])
