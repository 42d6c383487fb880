BupdatesJ<°‰g>My–¿ib–¿¥6@KÀz¿i‡Ú¿Â–¿RÈ|<™gä=ÿˆA¿Ú‘8¿(rÜ¿

¿J[¥¿WLª>