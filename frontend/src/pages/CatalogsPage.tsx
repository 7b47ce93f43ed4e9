// Placeholder replaced below once the catalogs view is written.
export function CatalogsPage() {
  return <div className="page"><h1>Catalogs</h1></div>
}
