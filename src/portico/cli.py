"""The ``portico`` command: serve, gateway, db upgrade, bootstrap, waf-engine."""

from __future__ import annotations

import asyncio

import typer
from rich.console import Console

from portico.core.db.engine import Database
from portico.core.db.migrate import pending, upgrade
from portico.core.logging import configure_logging
from portico.core.settings import Settings, split_host_port

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Portico API gateway platform")
db_app = typer.Typer(no_args_is_help=True, help="Database schema")
app.add_typer(db_app, name="db")
console = Console(stderr=True, soft_wrap=True)  # never wrap a password or a command


def _settings() -> Settings:
    try:
        return Settings()
    except ValueError as error:
        console.print(f"[red]configuration error:[/red] {error}")
        raise typer.Exit(2) from None


@db_app.command("upgrade")
def db_upgrade(revision: str = typer.Argument("head")) -> None:
    """Apply the Alembic migrations to the configured database."""
    settings = _settings()
    upgrade(settings.resolved_database_url, revision)
    console.print(f"database at {_safe_url(settings)} is at revision {revision}")


@app.command("bootstrap")
def bootstrap_command() -> None:
    """Create (or reuse) the administrator, the default organisation and the test environment."""
    from portico.bootstrap import bootstrap

    settings = _settings()

    async def run() -> None:
        database = Database(settings.resolved_database_url)
        try:
            result = await bootstrap(settings, database)
        finally:
            await database.dispose()
        if result.created_admin and result.generated_password:
            console.print(
                f"[bold]administrator created[/bold]: {result.email}\n"
                f"  generated password (shown once, not stored): [bold]{result.generated_password}"
                "[/bold]\n  set PORTICO_BOOTSTRAP_ADMIN_PASSWORD to choose it yourself"
            )
        elif result.created_admin:
            console.print(f"administrator created: {result.email} (password from the environment)")
        else:
            console.print(
                f"administrator {result.email} exists; reusing it (its password was printed when "
                f"it was created; `portico users set-password {result.email}` sets a new one)"
            )
        console.print(
            f"organisation id: {result.org_id}\nenvironment 'test' id: {result.environment_id}"
        )

    asyncio.run(run())


users_app = typer.Typer(no_args_is_help=True, help="Accounts")
app.add_typer(users_app, name="users")


@users_app.command("set-password")
def set_password(
    email: str,
    password: str = typer.Option(
        ...,
        prompt=True,
        hide_input=True,
        confirmation_prompt=True,
        envvar="PORTICO_NEW_PASSWORD",
        help="Prompted for when not given (never echoed).",
    ),
) -> None:
    """Set an account's password (e.g. a lost bootstrap password), revoking its sessions."""
    from portico.core import audit
    from portico.core.account import AccountStatus, find_by_email
    from portico.core.audit import Actor
    from portico.core.clock import Clock
    from portico.core.passwords import hash_password
    from portico.core.refresh import RefreshTokenStore

    if len(password) < 12:
        console.print("[red]password must be at least 12 characters[/red]")
        raise typer.Exit(2)
    settings = _settings()

    async def run() -> bool:
        database = Database(settings.resolved_database_url)
        try:
            async with database.session() as session, session.begin():
                user = await find_by_email(session, email)
                if user is None:
                    return False
                user.password_hash = hash_password(password)
                if user.status is AccountStatus.INVITED:
                    user.status = AccountStatus.ACTIVE
                store = RefreshTokenStore(Clock(), ttl_seconds=60, audience="portico-management")
                await store.revoke_subject(session, user.id)
                await audit.record(
                    session,
                    Actor.system("cli"),
                    action="user.set_password",
                    entity_type="user",
                    entity_id=user.id,
                )
                return True
        finally:
            await database.dispose()

    if not asyncio.run(run()):
        console.print(f"[red]no account with email {email}[/red]")
        raise typer.Exit(1)
    console.print(f"password of {email} changed; its refresh tokens are revoked")


admin_api_app = typer.Typer(no_args_is_help=True, help="Marketplace admin API")
app.add_typer(admin_api_app, name="admin-api")


@admin_api_app.command("set-web-api-key")
def set_web_api_key(
    from_stdin: bool = typer.Option(
        False, "--from-stdin", help="Read the key from the first line of standard input."
    ),
) -> None:
    """Set the identity provider's web API key, enabling the admin API's token issuance.

    The key is read from a hidden prompt (or stdin), never from the command line, so that it
    stays out of shell history and process lists; it is stored encrypted.
    """
    import sys

    from portico.core.audit import Actor
    from portico.core.clock import Clock
    from portico.core.sealing import secret_box
    from portico.marketplace.auth import service as auth_service

    value = sys.stdin.readline() if from_stdin else typer.prompt("Web API key", hide_input=True)
    try:
        auth_service.check_web_api_key(value)
    except ValueError as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(2) from None
    settings = _settings()

    async def run() -> None:
        database = Database(settings.resolved_database_url)
        try:
            async with database.session() as session, session.begin():
                await auth_service.set_web_api_key(
                    session=session,
                    box=secret_box(tuple(settings.signing_keys())),
                    value=value,
                    actor=Actor.system("cli"),
                    clock=Clock(),
                )
        finally:
            await database.dispose()

    asyncio.run(run())
    console.print("web API key stored (encrypted); the admin API now issues tokens")


#: what the banner says of the portal while it cannot sign developers in (the seed: token
#: issuance is off until an operator sets the identity provider's web API key)
PORTAL_SIGN_IN_OFF = (
    "\n    developers cannot sign in there until an operator runs "
    "`portico admin-api set-web-api-key`"
)


async def _issuance_enabled(settings: Settings) -> bool:
    """Whether the portal and the admin API issue tokens (what their sign-in needs)."""
    from portico.marketplace.auth import service as auth_service

    database = Database(settings.resolved_database_url)
    try:
        async with database.session() as session:
            return await auth_service.issuance_enabled(session=session, settings=settings)
    finally:
        await database.dispose()


@app.command("serve")
def serve(
    migrate: bool = typer.Option(True, help="Apply migrations before starting."),
) -> None:
    """Run the control plane (management service) on PORTICO_LISTEN."""

    settings = _settings()
    configure_logging(settings.log_level, log_format=settings.effective_log_format)
    if migrate:
        upgrade(settings.resolved_database_url)
    elif asyncio.run(pending(settings.resolved_database_url)):
        console.print(
            f"[red]the database at {_safe_url(settings)} is not at the latest migration[/red]; "
            "run `portico db upgrade` (or start without --no-migrate)"
        )
        raise typer.Exit(2)
    from portico.runner import serve_all, use_uvloop

    host, port = split_host_port(settings.listen)
    base = f"http://{host}:{port}"
    built = (settings.console_dir / "index.html").is_file()
    portal_built = (settings.portal_dir / "index.html").is_file()
    portal_note = "" if asyncio.run(_issuance_enabled(settings)) else PORTAL_SIGN_IN_OFF
    console.print(
        f"[bold]Portico[/bold] management service on {base}  (API docs: {base}/api/docs)\n"
        f"  web console on {base}/console/ (sign in as {settings.bootstrap_admin_email})"
        f"{'' if built else ': not built, run make web'}\n"
        f"  developer portal on {base}/portal/"
        f"{'' if portal_built else ': not built, run make web'}{portal_note}\n"
        f"  gateway (traffic) on http://{settings.gateway_listen}, "
        f"status on http://{settings.metrics_listen}/ready\n"
        f"  sign in: curl -s -X POST {base}/api/auth/login -H 'content-type: application/json' "
        f'-d \'{{"email": "{settings.bootstrap_admin_email}", "password": "..."}}\''
    )
    use_uvloop()
    asyncio.run(serve_all(settings))


@app.command("gateway")
def gateway_command(
    control_plane: str = typer.Option(..., help="Base URL of the control plane."),
    environment: str = typer.Option(..., help="Environment id this node serves."),
    token: str = typer.Option(..., envvar="PORTICO_DATAPLANE_TOKEN", help="Data-plane token."),
) -> None:
    """Run a standalone gateway node for one environment."""
    from portico.runner import run_gateway, use_uvloop

    settings = _settings()
    configure_logging(settings.log_level, log_format=settings.effective_log_format)
    console.print(
        f"[bold]Portico gateway[/bold] for environment {environment} on "
        f"http://{settings.gateway_listen} (status http://{settings.metrics_listen}/ready)"
    )
    use_uvloop()
    asyncio.run(
        run_gateway(
            settings,
            control_plane=control_plane,
            environment=environment,
            token=token,
            state_dir=settings.data_dir / "gateway",
        )
    )


@app.command("waf-engine")
def waf_engine(
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(9650, help="Port to listen on."),
    config: str | None = typer.Option(
        None, help="ModSecurity settings file replacing the built-in ones (SecRuleEngine On...)."
    ),
    crs_setup: str = typer.Option(
        "/etc/modsecurity/crs/crs-setup.conf", help="The Core Rule Set's setup file."
    ),
    rules: str = typer.Option(
        "/usr/share/modsecurity-crs/rules/*.conf", help="Glob of the Core Rule Set's rules."
    ),
) -> None:
    """Run the WAF engine the `waf` plugin asks (ModSecurity v3 + OWASP Core Rule Set)."""
    from portico.waf.engine import RuleFiles, serve
    from portico.waf.modsecurity import RuleEngineError

    files = RuleFiles(config=config, crs_setup=crs_setup, rules=rules)
    configure_logging("INFO")
    console.print(f"[bold]Portico WAF engine[/bold] on http://{host}:{port}/inspect")
    try:
        serve(host, port, files)
    except (RuleEngineError, OSError) as error:
        console.print(f"[red]cannot start the WAF engine:[/red] {error}")
        raise typer.Exit(2) from None


def _safe_url(settings: Settings) -> str:
    from sqlalchemy.engine import make_url

    return make_url(settings.resolved_database_url).render_as_string(hide_password=True)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
