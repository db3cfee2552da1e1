"""Portal organisations and their teams: who an API may be shown to (organisation
visibility) and which portals syndication can target. Their administration (members,
invitations, roles) comes with the organisations module; the catalogue only reads them."""
