"""The catalogue as a developer sees it on the portal (``/api/portal/v1/apis``,
``/products``): published API and product nodes only, each shown to whom its visibility
names (public: everyone; internal: any signed-in account; organisation: the active members
of the organisations, or teams, of its audience). What a caller may not see does not exist
for it. Reached by the portal through ``marketplace.public``."""
