B
past_cacheJ
		