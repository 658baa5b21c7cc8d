"""What a grid file and a cell's ``cell.yaml`` may say, validated once: the strict, frozen
pydantic base and its one-line errors (:mod:`.validation`), strict YAML (:mod:`.yamlfile`),
a training cell's config (:mod:`.cell`), the run key of a cell's coordinates
(:mod:`.runkey`), the grid file's sections (:mod:`.gridfile`), its positive controls
(:mod:`.controls`) and acceptance run (:mod:`.acceptance`), its revision pins
(:mod:`.pins`), and the grid expanded into cells (:mod:`.grid`). Pure Python."""
