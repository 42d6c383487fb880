
ByJ£L´L­L}L