"""What proxy-cache keeps responses in and by which rules: the memory and disk stores
(``store``, with the disk store's file work in ``files``) and HTTP caching's rules
(``policy``)."""
