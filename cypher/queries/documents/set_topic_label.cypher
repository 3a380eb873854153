// Purpose: store the label and short summary an LLM wrote for one of an owner's topics, with the
//   model that wrote them and when; the keyphrases stay beside them, and search_text (the label
//   index's text) becomes the label, the keyphrases and the summary. Nothing for a topic gone
//   meanwhile (a rebuild changed its members).
// Parameters: $tenant, $owner, $id, $label, $summary, $model, $now
// Columns: id
MATCH (t:Topic {tenant: $tenant, owner: $owner, id: $id})
SET t.keyphrases = coalesce(t.keyphrases, t.label), t.label = $label, t.summary = $summary,
    t.label_model = $model, t.labelled_at = $now
SET t.search_text = t.label + '\n' + t.keyphrases + '\n' + t.summary
RETURN t.id AS id
