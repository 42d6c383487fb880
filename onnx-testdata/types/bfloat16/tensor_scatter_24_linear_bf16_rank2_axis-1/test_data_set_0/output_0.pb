Bpresent_cacheJ
È¾"@À½\¿‚?